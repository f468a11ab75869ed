"""The trained classifier (code): ``loader`` picks and lazily loads the model
of a run, ``trained`` predicts, ``scorer`` is the compiled plain-data form
used at run time, ``files`` reads and writes the skops model files. The
model data files live apart, in ``forensics/diagnosis/model/``."""
