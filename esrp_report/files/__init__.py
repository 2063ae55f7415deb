"""Opening the files a user names, safely (``safe.py``): the lowest layer beside ``model``, since
readers (``ingest``), the rules file (``analysis``), templates and images (``render``), the catalog
and the commands' outputs (``app``) all open or write through it."""
