// placeholder until the umbrella API lands
