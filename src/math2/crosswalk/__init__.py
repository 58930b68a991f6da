"""Crosswalks: nodes keyed by Wikidata id, same_as edges to declarations, and clustering."""
