"""Reader apps that speak Komga, as test clients: their requests, and how they decode the answers."""
