"""NodeResourcesFit and NodeResourcesBalancedAllocation, and the resource scoring they share."""
