"""How right the answers are, and how sure they say they are: the labelled sets (`sets`), what the protocol
fits on (`features`, `fit`, `protocol`) and the tables it prints (`generalise`, `spread`, `calibrate`)."""
