"""Sources, Kafka I/O, main-text extraction, dates, sentences, chunks, MinHash dedup."""
