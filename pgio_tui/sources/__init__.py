"""Where numbers come from: PostgreSQL, the kernel, the disks. Each source is Textual-free."""
