"""Front doors: validate once, pick the side, ask planning for a plan, hand it to a backend."""
