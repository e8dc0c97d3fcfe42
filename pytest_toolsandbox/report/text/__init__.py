"""A run as text: terminal output, failure messages, Markdown, JUnit properties, tables, progress line."""
