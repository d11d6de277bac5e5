"""The rules of SET (and 358), standard library only: no pixels here."""
