"""Reading evidence: each file format Jetstress and perfmon write, detected by content and read into the
model, with damage reported as problems."""
