"""ProMQA candidates on the review platform (section 3.3, appendix B.3): the directory importer
(`importing.py`), the two annotators' judgements, their settlement and adjudication
(`judgements.py`), the judged pages (`pages.py`, page kind `procedural`) and the export in the
release layout (`exporting.py`), declared to the platform by `hooks.py`."""
