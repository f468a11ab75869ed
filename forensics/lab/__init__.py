"""The lab: tools that build the project's data (the corpus generator, training, evaluation, catalogue mining)."""
