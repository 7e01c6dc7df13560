/** The simulator in its own process (placeholder). */
process.exit(1)
