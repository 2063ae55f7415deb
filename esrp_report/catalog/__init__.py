"""The catalog: past Jetstress runs ingested from folders and archives into one DuckDB database, for listing,
querying and comparing."""
