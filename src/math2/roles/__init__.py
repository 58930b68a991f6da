"""Roles: model-driven jobs that write into the corpus (agent text, waiting for a person)."""
