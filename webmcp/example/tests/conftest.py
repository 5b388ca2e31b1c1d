import pytest
from library.models import Book


@pytest.fixture
def books(db):
    return {
        "dune": Book.objects.create(title="Dune", author="Frank Herbert"),
        "emma": Book.objects.create(title="Emma", author="Jane Austen"),
    }
