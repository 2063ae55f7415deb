"""The library API (``api``) and the pipelines around it: build, convert, doctor, init."""
