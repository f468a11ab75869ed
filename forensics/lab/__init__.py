"""The lab: tools that build the project's data (catalogue mining; later the corpus generator, training, evaluation)."""
