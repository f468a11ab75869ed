"""Stage 6: reports (text, JSON, DataFrames)."""
