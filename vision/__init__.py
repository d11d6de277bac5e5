"""The camera and image pipeline: image in, `core.board.Board` out, overlay drawn."""
