"""Configuration, ground floor: the ``stowage:`` keys, their typed sections and validation."""
