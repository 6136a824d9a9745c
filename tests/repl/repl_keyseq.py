"""Key sequences a terminal sends, for the pipe-input tests."""

BACKTAB = "\x1b[Z"
ALT_ENTER = "\x1b\r"
CTRL_C = "\x03"
CTRL_D = "\x04"
PASTE_START, PASTE_END = "\x1b[200~", "\x1b[201~"
