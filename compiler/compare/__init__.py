"""The "compile and compare" lab: one program timed eagerly and under several
torch.compile configurations."""
