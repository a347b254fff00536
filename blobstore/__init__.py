"""blobstore package."""
