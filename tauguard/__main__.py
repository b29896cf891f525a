from tauguard.cli.main import main

# Guarded: Dask's local workers are spawned processes that import the main module again.
if __name__ == "__main__":
    main()
