"""The text language: lexer, parser (with the parse-time sugar), linker, lint."""
