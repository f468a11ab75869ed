"""The command line: the only package that imports click (``forensics.cli.main:main``)."""
