"""DefaultPreemption: the dry run, victim selection and its arithmetic."""
