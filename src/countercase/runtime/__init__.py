"""What the project needs of the machine it runs on: the CPU's facts and thread counts, where
torch computes, the JVM for Pyserini, the packaged models, a second process for single-threaded
work, and the local LLM's recorded answers."""
