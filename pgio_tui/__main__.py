from pgio_tui.cli import main

raise SystemExit(main())
