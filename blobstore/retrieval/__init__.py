"""How a reader finds things in stored text: grep with a safe, time-bounded
regex engine (and its literal prefilter and windows), and JSON paths.

Pure functions over text; imports nothing from the storage modules of
:mod:`blobstore` nor from :mod:`blobstore.presentation`.
"""
