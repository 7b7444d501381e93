"""Legal entity tagging: a sequence tagger trained here on InLegalNER, and the fact sheet's span
tags (the tagger for sections and parties, the fact sheet rules for the rest)."""
