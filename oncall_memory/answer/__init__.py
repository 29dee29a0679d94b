"""Answering: look an alert up, rank the candidates by facts, say how sure and why, render the answer for
each reader, learn from responders' verdicts, and measure it all (`evaluate`)."""
