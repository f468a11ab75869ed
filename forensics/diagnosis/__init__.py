"""Stage 5: diagnosis (signatures, classifier, early warnings)."""
