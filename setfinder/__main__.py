from setfinder.cli import main

raise SystemExit(main())
