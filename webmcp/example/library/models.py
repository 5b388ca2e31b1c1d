from django.db import models


class Book(models.Model):
    title = models.CharField(max_length=200)
    author = models.CharField(max_length=200)
    available = models.BooleanField(default=True)

    def __str__(self) -> str:
        return self.title

    def as_dict(self) -> dict:
        return {"id": self.pk, "title": self.title, "author": self.author, "available": self.available}
