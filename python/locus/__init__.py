"""locus: reports and plots for the locus node-level memory library."""
__version__ = "0.1.0"
