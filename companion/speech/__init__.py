"""Spoken callouts: what the referee says (phrases, pure) and a small player that says
it (espeak-ng rendered once to cached WAV files, played with ALSA's aplay off the loop)."""
