"""Construction recipes beside ExpVid's own (`expvid build --recipe NAME`), one package each."""
