"""Synthetic SGLang / vLLM service-log corpus generator.

Run ``python -m forensics.lab.generator.generate --help``; the Python entry point is
:func:`forensics.lab.generator.generate.generate_corpus`.
"""
