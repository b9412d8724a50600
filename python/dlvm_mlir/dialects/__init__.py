"""Python op classes of the dlvm dialect (generated from ODS)."""
