"""The domain every stage shares: an incident and an alert, their facts, the noise stripped from their text,
the four signal lines distilled from it, its words and ops symptoms, and an alert's canonical signature."""
