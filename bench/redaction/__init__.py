"""What secret detection catches and what it alters that is not a secret: the coverage bench, the third-party
catalogues' own examples, and the files the redactor ships that are written from those catalogues."""
