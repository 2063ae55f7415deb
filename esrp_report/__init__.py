"""esrp-report: turn Jetstress evidence into checkable ESRP-Storage results."""

__version__ = "0.1.0"
