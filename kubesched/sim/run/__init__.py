"""Running the scheduler over a simulated cluster: whole scenarios, or one pod at a time."""
