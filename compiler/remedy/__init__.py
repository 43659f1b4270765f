"""Fixes the explorer tries itself: the user's target compiled again with a finding's
``Fix`` applied, in a fresh compile, measured before and after (``try_fixes``)."""
