"""HTTP routes, one module per page family; all of them are thin over `expvid.platform.services`."""
