from .cli import main

# Guarded: `schedspec verify` explores in spawned worker processes, which import this module
# again under another name and must not run the command line a second time.
if __name__ == "__main__":
    raise SystemExit(main())
