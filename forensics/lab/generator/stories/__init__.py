"""Per-server start-up stories: the phases of one SGLang or vLLM run, as the
programs print them (mixins of :class:`forensics.lab.generator.run.Run`)."""
