"""Learned decisions (issue 27): the label and how sure, from everything the
diagnosis already knows about a failure (signatures, the text classifier, a cut
traceback's frames, early warnings, the shape of death), by one calibrated model
trained by ``forensics train`` on ``corpora/public`` and the project's corpora."""
