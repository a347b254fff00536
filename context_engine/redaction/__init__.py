"""Redaction, ground floor: secrets found and masked in plain text (imports no other room)."""
