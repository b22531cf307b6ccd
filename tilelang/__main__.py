"""`python -m tilelang` is `tilec`."""

from tilelang.cli import main

if __name__ == "__main__":
    main()
