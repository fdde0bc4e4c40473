"""Configuration: inventory and kits, loaded once into typed records."""
